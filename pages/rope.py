import streamlit as st

st.title("rope")
st.info("This page is being built.")
