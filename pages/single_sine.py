import streamlit as st

st.title("single_sine")
st.info("This page is being built.")
