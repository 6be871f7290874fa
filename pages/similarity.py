import streamlit as st

st.title("similarity")
st.info("This page is being built.")
