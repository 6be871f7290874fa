import streamlit as st

st.title("learned")
st.info("This page is being built.")
